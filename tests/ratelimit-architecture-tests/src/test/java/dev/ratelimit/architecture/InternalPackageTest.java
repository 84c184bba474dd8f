package dev.ratelimit.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.RedisFailures;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Backs the promise of every {@code internal} package's documentation ({@code
 * dev.ratelimit.redis.internal}, {@code dev.ratelimit.spring.boot.web.internal}): nothing of it
 * appears in a public signature, so it can change in any release without breaking a user; and no
 * other module imports it, so what several modules share has a public, documented home instead
 * (such as {@code ratelimit-http}).
 */
public class InternalPackageTest {

    private static final String INTERNAL = "dev.ratelimit..internal";

    /** Public and protected members, superclasses and interfaces of exported types name no internal type. */
    static final ArchRule NO_INTERNAL_TYPE_IN_A_PUBLIC_SIGNATURE = classes()
            .that(exported())
            .and()
            .resideOutsideOfPackage(INTERNAL)
            .should(exposeNoInternalType())
            .as("no type of an internal package appears in a public signature of a public type outside it");

    /**
     * An internal package {@code x.internal} serves the package tree {@code x} it belongs to: {@code
     * dev.ratelimit.redis.internal} (ratelimit-redis-common) the Redis adapters {@code
     * dev.ratelimit.redis.lettuce} and {@code .jedis}, {@code dev.ratelimit.spring.boot.web.internal}
     * the Spring web stacks. Any other module reaching into it is a rule written in one module and
     * borrowed by another.
     */
    static final ArchRule NO_MODULE_IMPORTS_ANOTHER_MODULES_INTERNAL_PACKAGE = classes()
            .that()
            .resideInAPackage(INTERNAL)
            .should(beUsedOnlyWithinTheirOwnTree())
            .as("an internal package is used only within the package tree it belongs to");

    @Test
    @DisplayName("no module imports another module's internal package")
    void internalPackagesStayInTheirModule() {
        NO_MODULE_IMPORTS_ANOTHER_MODULES_INTERNAL_PACKAGE.check(production());
    }

    @Test
    @DisplayName("the rule catches a class outside the tree that uses an internal type")
    void ruleCatchesAForeignUser() {
        assertThatThrownBy(() -> NO_MODULE_IMPORTS_ANOTHER_MODULES_INTERNAL_PACKAGE.check(
                        new ClassFileImporter().importClasses(Borrower.class, KeySpace.class)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining(KeySpace.class.getName() + " is used by " + Borrower.class.getName());
    }

    @Test
    @DisplayName("no type of an internal package appears in a public signature outside that package")
    void internalTypesStayOutOfPublicSignatures() {
        NO_INTERNAL_TYPE_IN_A_PUBLIC_SIGNATURE.check(production());
    }

    @Test
    @DisplayName("the rule catches an internal type as a field, a type argument, a parameter and a supertype")
    void ruleCatchesEveryKindOfLeak() {
        assertThatThrownBy(() -> NO_INTERNAL_TYPE_IN_A_PUBLIC_SIGNATURE.check(
                        new ClassFileImporter().importClasses(LeakyAdapter.class, LeakyException.class)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("field " + LeakyAdapter.class.getName() + ".failures")
                .hasMessageContaining("ids()")
                .hasMessageContaining("reconnect(")
                .hasMessageContaining("supertype of " + LeakyException.class.getName());
    }

    @Test
    @DisplayName("private members and package-private types may use internal types")
    void hiddenUseIsAllowed() {
        NO_INTERNAL_TYPE_IN_A_PUBLIC_SIGNATURE.check(new ClassFileImporter().importClasses(Hidden.class));
        assertThat(Hidden.count()).isZero();
    }

    /** A deliberately leaky adapter. */
    public static class LeakyAdapter {

        /** Leaks through a public field. */
        public RedisFailures[] failures = new RedisFailures[0];

        /**
         * Leaks through a type argument of a return type.
         *
         * @return nothing
         */
        public List<KeySpace> ids() {
            return List.of();
        }

        /**
         * Leaks through a parameter.
         *
         * @param ids ignored
         */
        protected void reconnect(Optional<KeySpace> ids) {}
    }

    /** Leaks through its superclass. */
    public abstract static class LeakyException extends Exception implements Comparable<KeySpace> {
        private static final long serialVersionUID = 1L;
    }

    /** Borrows another module's internal type, as a module outside its package tree. */
    static final class Borrower {

        private Borrower() {}

        static int borrow(KeySpace keys) {
            return keys.hashCode();
        }
    }

    /** Uses internal types only where no user sees them. */
    public static final class Hidden {

        private static final List<KeySpace> IDS = List.of();

        private Hidden() {}

        static int count() {
            return IDS.size();
        }
    }

    /** Every module's production classes, with the internal packages the rules are about. */
    private static JavaClasses production() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.ratelimit");
        assertThat(classes.containPackage("dev.ratelimit.redis.internal")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.spring.boot.web.internal"))
                .isTrue();
        return classes;
    }

    private static DescribedPredicate<JavaClass> exported() {
        return DescribedPredicate.describe("are public (and so are their enclosing types)", javaClass -> {
            for (Optional<JavaClass> c = Optional.of(javaClass);
                    c.isPresent();
                    c = c.get().getEnclosingClass()) {
                if (!c.get().getModifiers().contains(JavaModifier.PUBLIC)) {
                    return false;
                }
            }
            return true;
        });
    }

    private static ArchCondition<JavaClass> exposeNoInternalType() {
        return new ArchCondition<>("expose no type of an internal package") {
            @Override
            public void check(JavaClass javaClass, ConditionEvents events) {
                Stream.concat(javaClass.getSuperclass().stream(), javaClass.getInterfaces().stream())
                        .forEach(type -> report(events, javaClass, type, "supertype of " + javaClass.getName()));
                javaClass.getFields().stream()
                        .filter(InternalPackageTest::visible)
                        .forEach(field -> report(events, javaClass, field.getType(), "field " + field.getFullName()));
                for (JavaCodeUnit unit : javaClass.getCodeUnits()) {
                    if (!visible(unit)) {
                        continue;
                    }
                    String where = unit.getFullName();
                    report(events, javaClass, unit.getReturnType(), "return type of " + where);
                    unit.getParameterTypes().forEach(type -> report(events, javaClass, type, "parameter of " + where));
                    unit.getExceptionTypes().forEach(type -> report(events, javaClass, type, "exception of " + where));
                }
            }
        };
    }

    private static ArchCondition<JavaClass> beUsedOnlyWithinTheirOwnTree() {
        return new ArchCondition<>("be used only within the package tree their internal package belongs to") {
            @Override
            public void check(JavaClass internal, ConditionEvents events) {
                String packageName = internal.getPackageName();
                String tree = packageName.substring(0, packageName.indexOf(".internal"));
                internal.getDirectDependenciesToSelf().stream()
                        .map(dependency -> dependency.getOriginClass())
                        .filter(origin -> !origin.getPackageName().equals(tree)
                                && !origin.getPackageName().startsWith(tree + "."))
                        .map(JavaClass::getName)
                        .distinct()
                        .forEach(origin -> events.add(SimpleConditionEvent.violated(
                                internal, internal.getName() + " is used by " + origin + ", outside " + tree)));
            }
        };
    }

    private static boolean visible(JavaMember member) {
        Set<JavaModifier> modifiers = member.getModifiers();
        return modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED);
    }

    private static void report(ConditionEvents events, JavaClass owner, JavaType type, String where) {
        type.getAllInvolvedRawTypes().stream()
                .map(raw -> raw.isArray() ? raw.getBaseComponentType() : raw)
                .filter(raw -> raw.getPackageName().startsWith("dev.ratelimit.")
                        && raw.getPackageName().endsWith(".internal"))
                .forEach(raw -> events.add(SimpleConditionEvent.violated(
                        owner, raw.getName() + " appears as " + where + " (" + owner.getSource() + ")")));
    }
}
